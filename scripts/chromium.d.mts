export declare const DEFAULT_CHROMIUM: string;
export declare const CHROMIUM_ARGS: string[];
export declare function chromiumVersion(path: string): string | null;
export declare function findChromium(options?: {
  install?: boolean;
  log?: (line: string) => void;
}): Promise<{ path: string; version: string | null } | { reason: string }>;
