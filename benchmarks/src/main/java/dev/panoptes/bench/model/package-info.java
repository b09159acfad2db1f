/**
 * The model side: the HTTP clients the model-client measurement compares and the JVMs it runs them
 * in, the fast OpenAI-compatible server it calls, and the product's stub model that e2e and
 * ratelimit call.
 */
package dev.panoptes.bench.model;
