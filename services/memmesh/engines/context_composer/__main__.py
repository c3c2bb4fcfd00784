from memmesh.engines.context_composer.main import main

main()
