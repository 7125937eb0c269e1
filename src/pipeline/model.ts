/**
 * Threat models, the customers' own detections, as two stages around the built-in detectors: the
 * account's models in force are looked up before detect (under the stamp the request read at
 * authentication), and evaluated after it, on the same window state. Their
 * alerts join the event's before it is scored.
 */
import type { DetectedEvent } from '../event/types.js';
import type { CompiledModel } from '../threat-models/compile.js';
import type { ModelDetection } from '../threat-models/evaluate.js';
import type { ThreatModelStage } from '../threat-models/stage.js';
import type { AlertWrite } from '../storage/types.js';
import type { Detected, Enriched, LookedUp, Modelled } from './request.js';
import type { Stage } from './stage.js';

const NO_MODELS: readonly CompiledModel[] = Object.freeze([]);

/** The account's models in force; none when the service runs none, the plan has none, or no event goes on. */
export function lookUpStage(models: ThreatModelStage | undefined): Stage<Enriched, LookedUp> {
  return (request) => {
    const found = models === undefined || request.enriched.length === 0 ? undefined : models.lookup(request.account);
    // When detection fails before the lookup is awaited, its rejection is not left unobserved.
    if (found instanceof Promise) found.catch(() => undefined);
    return Object.assign(request, { models: found ?? NO_MODELS });
  };
}

/** Evaluates the models in force over the detected events; an event a model fired on gets its alerts and alert rows. */
export function modelStage(models: ThreatModelStage | undefined): Stage<Detected, Modelled> {
  const unchanged = (request: Detected): Modelled => Object.assign(request, { modelled: request.detected });

  function evaluate(request: Detected, inForce: readonly CompiledModel[]): Modelled | Promise<Modelled> {
    const running = inForce.length === 0 || models === undefined ? undefined : models.run(inForce, request.detected, request.ids, request.account);
    return running === undefined ? unchanged(request) : running.then((found) => withModelAlerts(request, found));
  }

  return (request) => {
    const inForce = request.models;
    return inForce instanceof Promise ? inForce.then((list) => evaluate(request, list)) : evaluate(request, inForce);
  };
}

/** The models' alerts after the built-in detectors' on each event they fired on; their rows after the detectors' rows. */
function withModelAlerts(request: Detected, found: readonly ModelDetection[]): Modelled {
  const { detected } = request;
  let modelWrites: (readonly AlertWrite[] | undefined)[] | undefined;
  for (let n = 0; n < detected.length; n++) {
    const more = found[n];
    if (more === undefined || more.alerts.length === 0) continue;
    const event = detected[n] as DetectedEvent;
    Object.assign(event, { alerts: [...event.alerts, ...more.alerts] });
    (modelWrites ??= new Array<readonly AlertWrite[] | undefined>(detected.length))[n] = more.writes;
  }
  return Object.assign(request, { modelled: detected, modelWrites });
}
