/**
 * docs/reference/detectors.md, generated from the detector modules. `npm run docs:detectors`
 * writes it; reference.test.ts fails when the committed file differs from what this generates.
 */
import { writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { DETECTOR_FAMILIES } from '../../src/event/classification.js';
import { DETECTOR_MODULES, type DetectorModule } from '../../src/detection/detectors/index.js';
import { killChain } from '../../src/detection/kill-chains.js';
import { alertSpec } from '../../src/detection/specs.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../src/util/duration.js';

export const REFERENCE_PATH = new URL('../../docs/reference/detectors.md', import.meta.url).pathname;

const code = (text: string) => `\`${text}\``;
const cell = (text: string) => text.replaceAll('|', '\\|');
const number = (n: number) => n.toLocaleString('en-US');

function duration(ms: number): string {
  for (const [unit, name] of [
    [DAY_MS, 'day'],
    [HOUR_MS, 'hour'],
    [MINUTE_MS, 'minute'],
  ] as const) {
    if (ms % unit === 0) return `${ms / unit} ${name}${ms === unit ? '' : 's'}`;
  }
  return `${ms} ms`;
}

function families(d: DetectorModule): string {
  if (d.generic === true) return 'every event, `custom.*` included';
  if (d.families.length === DETECTOR_FAMILIES.length) return 'every family';
  return d.families.join(', ');
}

function decision(d: DetectorModule, type: string): string {
  const declared = d.alerts[type]?.decision;
  const effective = alertSpec(type).decision ?? 'none';
  return declared === undefined ? effective : `${effective} (declared)`;
}

function section(d: DetectorModule): string[] {
  const lines = [
    `## ${code(d.name)}`,
    '',
    d.description,
    '',
    `Runs on: ${families(d)}.${d.scored === false ? ' Its alerts add no points: the score counts the same signal on a line of its own.' : ''}`,
    '',
  ];
  lines.push('| alert type | severity | points | decision | standing | window | MITRE ATT&CK |', '| --- | --- | --- | --- | --- | --- | --- |');
  for (const type of Object.keys(d.alerts)) {
    const spec = alertSpec(type);
    const points = d.scored === false ? '0' : String(spec.points);
    lines.push(
      `| ${code(type)} | ${spec.severity} | ${points} | ${decision(d, type)} | ${spec.carries === true ? 'yes' : 'no'} | ${duration(spec.windowMs ?? 0)} | ${spec.mitre.join(', ')} |`,
    );
  }
  lines.push('');
  for (const type of Object.keys(d.alerts)) lines.push(`- ${code(type)}: ${alertSpec(type).description}`);
  lines.push('');
  const thresholds = Object.entries(d.thresholds ?? {});
  if (thresholds.length === 0) lines.push('No thresholds: only `enabled` can be set.', '');
  else {
    lines.push('| threshold | default | min | max | meaning |', '| --- | --- | --- | --- | --- |');
    for (const [name, t] of thresholds) lines.push(`| ${code(name)} | ${number(t.default)} | ${number(t.min)} | ${number(t.max)} | ${cell(t.description)} |`);
    lines.push('');
  }
  if (d === killChain) {
    for (const chain of killChain.chains) {
      lines.push(`### ${code(chain.type)}`, '', `Its stages, in order, on one ${chain.subject} within ${duration(chain.windowMs)}:`, '');
      chain.stages.forEach((stage, i) => lines.push(`${i + 1}. ${code(stage.name)}: ${stage.description}`));
      lines.push('');
    }
  }
  return lines;
}

/** The reference page, formatted as the repository's Prettier settings format Markdown. */
export async function detectorReference(): Promise<string> {
  const alertCount = DETECTOR_MODULES.reduce((n, d) => n + Object.keys(d.alerts).length, 0);
  const lines = [
    '# Detectors',
    '',
    `Vigil runs ${DETECTOR_MODULES.length} detectors raising ${alertCount} alert types, ${killChain.chains.length} of them kill chains. This page is generated from the detector modules (${code('src/detection/detectors/')} and ${code('src/detection/kill-chains.ts')}) by ${code('npm run docs:detectors')}; a test fails when it differs from them. ${code('GET /v1/catalog')} serves the same declarations.`,
    '',
    'An event goes to the detectors of its families (the catalogue gives each event type its families). Each account can turn a detector off and change its thresholds with `PATCH /v1/settings`; a value outside a threshold\u2019s range is refused:',
    '',
    '```json',
    '{ "detectors": { "brute_force": { "account_failures": 20, "window_minutes": 10 }, "disposable_email": { "enabled": false } } }',
    '```',
    '',
    'In the alert tables, **points** are what the alert adds to the risk score, **decision** is the least action the event that raises it gets (`challenge` or `block`: the account\u2019s threshold becomes the score\u2019s floor; "declared" when the detector sets it rather than the severity), **standing** says whether later events of the same actor or session are challenged while the alert is open, and **window** is how long a new sighting updates the open alert instead of opening another.',
    '',
    '| detector | runs on | alert types | thresholds |',
    '| --- | --- | --- | --- |',
    ...DETECTOR_MODULES.map(
      (d) =>
        `| [${code(d.name)}](#${d.name}) | ${families(d)} | ${Object.keys(d.alerts).length} | ${
          Object.keys(d.thresholds ?? {})
            .map(code)
            .join(', ') || '—'
        } |`,
    ),
    '',
    ...DETECTOR_MODULES.flatMap(section),
  ];
  const options = await resolveConfig(REFERENCE_PATH);
  return format(lines.join('\n'), Object.assign({}, options, { filepath: REFERENCE_PATH }));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(REFERENCE_PATH, await detectorReference());
  console.log(`wrote ${REFERENCE_PATH}`);
}
