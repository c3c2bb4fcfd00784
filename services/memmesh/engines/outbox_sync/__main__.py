from memmesh.engines.outbox_sync.main import main

main()
