/**
 * The {@link dev.panoptes.eval.ModelClient} for OpenAI-compatible chat completion APIs over HTTP
 * (Apache HttpClient 5), with its failure policy and retries, and the {@link
 * dev.panoptes.eval.http.ModelApiCheck} a worker runs before it takes jobs.
 */
package dev.panoptes.eval.http;
