import TripBoardCLI
import TripBoardStorage
import TripBoardSystem

ProcessSetup.applyDefaults()
ProcessSetup.exit(WidgetCommand.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessSetup.environment(WidgetCommand.environmentNames)))
