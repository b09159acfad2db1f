/**
 * What the demo and the tests stand in for a real deployment with: a stub OpenAI-compatible model server
 * ({@link dev.panoptes.demo.StubModelServer}) and the demo's scratch folder ({@link dev.panoptes.demo.DemoScratch}).
 */
package dev.panoptes.demo;
