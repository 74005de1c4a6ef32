import TripBoardCLI
import TripBoardMigration
import TripBoardSystem

ProcessSetup.applyDefaults()
ProcessSetup.exit(MigrationCommand.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessSetup.environment()))
