// The script of the test page: the browser client and the conformance harness, bundled.
import { VigilBrowser } from '../src/index.js';
import { replay, type Scenario } from '../../core/test/harness.js';

const testPage = {
  VigilBrowser,
  runScenario: (scenario: Scenario, serverUrl: string) => replay(scenario, serverUrl, (options) => new VigilBrowser({ ...options, beaconOnHide: false })),
};
declare global {
  interface Window {
    testPage: typeof testPage;
  }
}
window.testPage = testPage;
