package dev.panoptes.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code --no-progress} on the commands that run a coordinator. */
class ProgressOptionTest {

    @Test
    void theBarIsWantedUnlessNoProgressIsGiven() {
        ProgressOption option = new ProgressOption();
        new CommandLine(option).parseArgs();
        assertThat(option.live()).isTrue();

        new CommandLine(option).parseArgs("--no-progress");
        assertThat(option.live()).isFalse();
    }

    @Test
    void coordinatorAndDemoTakeItAndSayWhenTheBarIsOffAnyway() {
        for (Object command : new Object[] {new CoordinatorCommand(Map.of()), new DemoCommand()}) {
            CommandLine.Model.OptionSpec option = new CommandLine(command).getCommandSpec().findOption("--no-progress");
            assertThat(option).as("%s", command.getClass().getSimpleName()).isNotNull();
            assertThat(String.join(" ", option.description())).contains("not a terminal", "TERM=dumb");
        }
    }
}
