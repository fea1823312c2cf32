// The suites' jest runner: a few worker processes for the whole run, each running test files one
// after another (`run-file.cjs`).
//
// jest's default runner gives every test file a module registry of its own, in a sandbox of its
// own, so each file loaded and compiled the service's 1,100 modules again, made its own
// AsyncLocalStorage instances (which Node 20 then copied into every promise of every later file)
// and compiled the same JSON Schemas again: more than half the CPU of `test:quick`. Here a worker
// loads each module once, as a deployment does. What a test file starts (servers, databases,
// upstream providers, browsers) is still its own; no suite keeps state in a module.
import { fileURLToPath } from 'node:url';

import { createJestRunner } from 'create-jest-runner';

export default createJestRunner(fileURLToPath(new URL('./run-file.cjs', import.meta.url)));
