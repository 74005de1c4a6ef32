import TripBoardCLI
import TripBoardStorage

ProcessSetup.applyDefaults()
ProcessSetup.exit(WidgetCommand.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessSetup.environment(WidgetCommand.environmentNames)))
