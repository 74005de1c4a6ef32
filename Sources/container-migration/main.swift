import TripBoardCLI
import TripBoardMigration
import TripBoardSystem

ProcessSetup.applyDefaults()
ProcessSetup.exit(MigrationCommand.main(rawArguments: ProcessSetup.rawArguments(), environment: ProcessSetup.environment()))
