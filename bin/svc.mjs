#!/usr/bin/env node
// The `svc` command (also installed as `svc-review`, the package's name, for `npx svc-review`).
// The sources are TypeScript run through tsx's loader, so a fresh clone needs no build step:
// `npm install` is the whole installation. main.ts loads each command's modules only when that
// command runs.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
