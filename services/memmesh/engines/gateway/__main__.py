from memmesh.engines.gateway.main import main

main()
