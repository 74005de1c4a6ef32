import TripBoardCLI
import TripBoardStorage

ProcessSetup.applyDefaults()
ProcessSetup.exit(MigrationCommand.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessSetup.environment()))
