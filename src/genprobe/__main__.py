from genprobe.cli import main

main()
