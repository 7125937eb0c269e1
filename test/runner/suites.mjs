// Every test suite of the repository, run in this order by `npm test`.
// command(reportFile, extraArgs) returns the argv; report names the runner's report format.
export const SUITES = [
  {
    name: 'service',
    report: 'vitest-json',
    command: (report, extra) => ['npx', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extra],
  },
  {
    // The Python client: unit tests, conformance scenarios against the kit's scripted server,
    // Flask and Django integrations, and integration tests against the real service.
    name: 'client-python',
    report: 'junit',
    requires: ['node', '/usr/bin/python3'],
    cwd: 'clients/python',
    command: (report) => ['/usr/bin/python3', '-m', 'pytest', '-q', `--junitxml=${report}`],
  },
];
