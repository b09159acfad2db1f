// Reads rendered Kubernetes manifests (YAML, several documents) on standard input and checks
//   1. each object against the Kubernetes API schema of its apiVersion and kind (kubernetes-models:
//      JSON schemas generated from Kubernetes' OpenAPI: types, required fields, enums, formats;
//      they do not reject unknown fields, so a misspelt optional field passes this step), and
//   2. what Panoptes relies on, which no schema knows: probes on the image's health signal, the
//      non-root user, a worker's --grace below its pod's terminationGracePeriodSeconds, the
//      coordinator's Service selecting the coordinator's pods and the workers reaching it by that
//      name, and the secret keys the processes read.
// Prints one line per object and exits 1 naming every problem found.
import { parseAllDocuments } from "yaml";
import { readFileSync } from "node:fs";

const problems = [];
const objects = [];
for (const doc of parseAllDocuments(readFileSync(0, "utf8"))) {
  if (doc.errors.length > 0) {
    problems.push(`YAML: ${doc.errors.map((e) => e.message).join("; ")}`);
    continue;
  }
  const object = doc.toJS();
  if (object !== null) objects.push(object);
}
if (objects.length === 0) problems.push("no Kubernetes objects on standard input");

// 1. The schema of each object's kind.
for (const object of objects) {
  const { apiVersion, kind } = object;
  const name = `${kind ?? "?"}/${object.metadata?.name ?? "?"}`;
  if (typeof apiVersion !== "string" || typeof kind !== "string") {
    problems.push(`${name}: no apiVersion or kind`);
    continue;
  }
  let model;
  try {
    model = (await import(`kubernetes-models/${apiVersion}/${kind}`))[kind];
  } catch (e) {
    problems.push(`${name}: no schema for ${apiVersion} ${kind} (${e.code ?? e.message})`);
    continue;
  }
  try {
    new model(object).validate();
    console.log(`schema ok: ${apiVersion} ${name}`);
  } catch (e) {
    problems.push(`${name}: ${e.message}`);
  }
}

// 2. What Panoptes relies on.
const pods = objects
  .filter((o) => ["Deployment", "Job", "StatefulSet"].includes(o.kind))
  .map((o) => ({ owner: `${o.kind}/${o.metadata.name}`, template: o.spec?.template ?? {} }));
const isPanoptes = (c) => typeof c.image === "string" && /(^|\/)panoptes-worker(:|@|$)/.test(c.image);
const argValue = (args, option) => {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === option) return args[i + 1];
    if (args[i].startsWith(`${option}=`)) return args[i].slice(option.length + 1);
  }
  return undefined;
};
const seconds = (duration) => {
  const m = /^(\d+)(ms|s|m|h)$/.exec(duration ?? "");
  if (!m) return undefined;
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600 }[m[2]];
};
let coordinatorService;
for (const service of objects.filter((o) => o.kind === "Service")) {
  if (service.metadata.name === "panoptes-coordinator") coordinatorService = service;
}
for (const { owner, template } of pods) {
  const spec = template.spec ?? {};
  const labels = template.metadata?.labels ?? {};
  const all = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  for (const c of all.filter(isPanoptes)) {
    const where = `${owner} container ${c.name}`;
    const args = c.args ?? [];
    const sidecar = (spec.initContainers ?? []).includes(c);
    const user = c.securityContext?.runAsUser ?? spec.securityContext?.runAsUser;
    const nonRoot = c.securityContext?.runAsNonRoot ?? spec.securityContext?.runAsNonRoot;
    if (nonRoot !== true || !(user > 0)) problems.push(`${where}: not set to run as the image's non-root user (runAsNonRoot, runAsUser 10001)`);
    if (sidecar) continue; // the stub model server: probed by its own HTTP path
    for (const probe of ["readinessProbe", "livenessProbe"]) {
      const command = c[probe]?.exec?.command ?? [];
      if (command[0] !== "/app/bin/panoptes-health") {
        problems.push(`${where}: ${probe} is not the image's health signal (/app/bin/panoptes-health)`);
        continue;
      }
      const metrics = argValue(args, "--metrics");
      if (!metrics || metrics.split(":").pop() !== String(command[1] ?? "9464")) {
        problems.push(`${where}: ${probe} asks port ${command[1] ?? 9464}, but --metrics is ${metrics ?? "not given"}`);
      }
    }
    const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e]));
    const token = env.PANOPTES_TOKEN?.valueFrom?.secretKeyRef;
    if (!token || token.optional) problems.push(`${where}: PANOPTES_TOKEN does not come from a required secret key`);
    if (args[0] === "coordinator") {
      if (!coordinatorService) {
        problems.push(`${where}: no Service panoptes-coordinator for workers to reach it`);
      } else {
        const selector = coordinatorService.spec?.selector ?? {};
        const selects = Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
        if (!selects) problems.push(`Service/panoptes-coordinator: its selector does not select ${owner}'s pods`);
        const listen = argValue(args, "--listen") ?? "";
        const ports = (coordinatorService.spec?.ports ?? []).map((p) => p.port);
        if (!ports.includes(Number(listen.split(":").pop()))) problems.push(`Service/panoptes-coordinator: no port for --listen ${listen}`);
      }
    } else if (argValue(args, "--coordinator") !== undefined) {
      const coordinator = argValue(args, "--coordinator");
      if (coordinatorService && coordinator.split(":")[0] !== coordinatorService.metadata.name) {
        problems.push(`${where}: --coordinator ${coordinator} is not the Service panoptes-coordinator`);
      }
      const grace = seconds(argValue(args, "--grace") ?? "30s");
      const period = spec.terminationGracePeriodSeconds ?? 30;
      if (grace === undefined || grace + 10 > period) {
        problems.push(`${where}: --grace ${argValue(args, "--grace")} leaves under 10 s of terminationGracePeriodSeconds ${period} for the model server's stop`);
      }
      const sidecars = (spec.initContainers ?? []).filter((s) => s.restartPolicy === "Always");
      const api = argValue(args, "--model-api") ?? "";
      if (/^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(api) && sidecars.length === 0) {
        problems.push(`${where}: --model-api ${api} is on the pod's loopback, and the pod has no model server sidecar`);
      }
    }
  }
}

if (problems.length > 0) {
  for (const p of problems) console.error(`problem: ${p}`);
  process.exit(1);
}
console.log(`${objects.length} objects: schemas and Panoptes' own rules hold`);
