import TripBoardCLI
import TripBoardStorage
import TripBoardSystem

ProcessSetup.applyDefaults()
ProcessSetup.exit(AppCommand.main(rawArguments: ProcessSetup.rawArguments(), environment: ProcessSetup.environment()))
