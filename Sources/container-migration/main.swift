import TripBoardCLI
import TripBoardStorage
import TripBoardSystem

ProcessSetup.applyDefaults()
ProcessSetup.exit(MigrationCommand.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessSetup.environment()))
