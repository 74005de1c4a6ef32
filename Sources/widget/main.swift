import TripBoardSystem
import TripBoardWidget

ProcessSetup.applyDefaults()
ProcessSetup.exit(WidgetCommand.main(rawArguments: ProcessSetup.rawArguments(), environment: ProcessSetup.environment(WidgetCommand.environmentNames)))
