// Every test suite of the repository, run in this order by `npm test`.
// command(reportFile, extraArgs) returns the argv; report names the runner's report format.
export const SUITES = [
  {
    name: 'service',
    report: 'vitest-json',
    command: (report, extra) => ['npx', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extra],
  },
  {
    // The Go client: unit tests, the conformance scenarios against the kit's scripted server and
    // integration tests against the real service (both started with node). Go's module proxy is
    // off (the client has no dependencies) and its caches live under /tmp, so a clean clone works.
    name: 'client-go',
    report: 'go-json',
    cwd: 'clients/go',
    requires: ['go', 'node'],
    env: { GOPROXY: 'off', GOFLAGS: '-mod=mod', GOCACHE: '/tmp/vigil-go-cache', GOPATH: '/tmp/vigil-go-path', GOTOOLCHAIN: 'local' },
    command: () => ['go', 'test', '-json', '-count=1', './...'],
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
  {
    // The PHP client: unit tests, every conformance scenario, the Laravel integration and the real service.
    name: 'client-php',
    report: 'junit',
    requires: ['php', 'phpunit', 'node'],
    cwd: 'clients/php',
    command: (report) => ['phpunit', '--log-junit', report],
  },
];
