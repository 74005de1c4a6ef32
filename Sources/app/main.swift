import TripBoardCLI
import TripBoardStorage

ProcessSetup.applyDefaults()
ProcessSetup.exit(AppCommand.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessSetup.environment()))
