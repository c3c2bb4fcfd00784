from memmesh.engines.thread_store.main import main

main()
