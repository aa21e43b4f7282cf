#!/usr/bin/env node
// The `svc` command. The sources are TypeScript run through tsx's loader, so a
// fresh clone needs no build step: `npm install` is the whole installation.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
