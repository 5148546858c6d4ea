from recorder.cli import main

main()
