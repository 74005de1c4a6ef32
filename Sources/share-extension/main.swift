import TripBoardShareExtension
import TripBoardSystem

ProcessSetup.applyDefaults()
ProcessSetup.exit(ShareCommand.main(rawArguments: ProcessSetup.rawArguments(), environment: ProcessSetup.environment()))
