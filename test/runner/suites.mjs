// Every test suite of the repository, run in this order by `npm test`.
// command(reportFile, extraArgs) returns the argv; report names the runner's report format.
export const SUITES = [
  {
    name: 'service',
    report: 'vitest-json',
    command: (report, extra) => ['npx', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extra],
  },
  {
    // The PHP client: unit tests, every conformance scenario, the Laravel integration and the real service.
    name: 'client-php',
    report: 'junit',
    requires: ['php', 'phpunit', 'node'],
    cwd: 'clients/php',
    command: (report) => ['phpunit', '--log-junit', report],
  },
];
