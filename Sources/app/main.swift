import TripBoardCLI
import TripBoardStorage

ProcessSetup.applyDefaults()
ProcessSetup.exit(AppCommand.main(rawArguments: ProcessSetup.rawArguments(), environment: ProcessSetup.environment()))
