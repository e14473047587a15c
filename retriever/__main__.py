from retriever.adapters.cli import main

main()
