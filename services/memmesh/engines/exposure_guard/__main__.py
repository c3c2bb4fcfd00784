from memmesh.engines.exposure_guard.main import main

main()
