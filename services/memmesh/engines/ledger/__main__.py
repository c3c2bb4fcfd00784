from memmesh.engines.ledger.main import main

main()
