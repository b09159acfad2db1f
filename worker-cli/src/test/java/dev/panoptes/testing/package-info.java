/**
 * What the tests of several packages share: a scripted coordinator ({@link dev.panoptes.testing.FakeCoordinator}),
 * the built jar run as processes ({@link dev.panoptes.testing.JarProcesses}), a scripted model, suites, log capture
 * and scrapes of the admin endpoint.
 */
package dev.panoptes.testing;
