from memmesh.engines.atom_extractor.main import main

main()
