from memmesh.engines.retrieval_ranker.main import main

main()
