import TripBoardShareExtension
import TripBoardSystem

ProcessSetup.applyDefaults()
ProcessSetup.exit(ShareCommand.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessSetup.environment()))
