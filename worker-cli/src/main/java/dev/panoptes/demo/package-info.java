/**
 * What the demo stands in for a real deployment with: a stub OpenAI-compatible model server
 * ({@link dev.panoptes.demo.StubModelServer}, also the tests' model API), the demo's worker processes
 * ({@link dev.panoptes.demo.DemoFleet}) and its scratch folder ({@link dev.panoptes.demo.DemoScratch}).
 */
package dev.panoptes.demo;
