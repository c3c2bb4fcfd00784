from memmesh.engines.current_state.main import main

main()
