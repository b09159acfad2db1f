/**
 * What every part of the binary shares in how it speaks to the person at the console: durations written as the
 * command line reads them back ({@link dev.panoptes.console.Durations}) and logback's levels
 * ({@link dev.panoptes.console.Logging}); it imports nothing of the other packages.
 */
package dev.panoptes.console;
