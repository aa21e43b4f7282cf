export const DIST: string;
export function isStale(): Promise<boolean>;
export function buildSvc(options?: { ifStale?: boolean }): Promise<import('esbuild').Metafile | null>;
