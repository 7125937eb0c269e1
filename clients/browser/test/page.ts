// The script of the test page: the browser client and the conformance harness, bundled.
import { Vigil, VigilBrowser } from '../src/index.js';
import { replay, type Scenario } from '../../core/test/harness.js';

const testPage = {
  Vigil,
  VigilBrowser,
  runScenario: (scenario: Scenario, serverUrl: string) => replay(scenario, serverUrl, (options) => new Vigil({ ...options, beaconOnHide: false })),
};
declare global {
  interface Window {
    testPage: typeof testPage;
  }
}
window.testPage = testPage;
