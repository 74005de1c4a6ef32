import TripBoardSystem
import TripBoardWidget

ProcessSetup.applyDefaults()
ProcessSetup.exit(WidgetCommand.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessSetup.environment(WidgetCommand.environmentNames)))
