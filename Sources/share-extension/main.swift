import TripBoardCLI
import TripBoardStorage

ProcessSetup.applyDefaults()
ProcessSetup.exit(ShareCommand.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessSetup.environment()))
