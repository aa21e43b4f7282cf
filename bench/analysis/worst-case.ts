/**
 * Files built to make the builtin data-flow analysis work hardest per byte: N sinks (a shell
 * command built from a value the flow adapter must resolve) in one file, in several shapes, for
 * every language with a flow adapter. `npm run bench:analysis` times them for growing N; the
 * tests under test/reviewers/builtin count the resolution work they cause.
 *
 * Shapes (each is the same sink repeated; what differs is what the resolution has to look at):
 * - functions: N functions, each declaring the same name and passing it to a sink: N declarations
 *   of one name, each in its own scope (the probe's shape);
 * - one-function: one function with N sinks reading names declared and appended to before each;
 * - distinct-names: N module-level declarations of N different names, each passed to a sink;
 * - appends: one binding appended to N times, read by a sink after each append;
 * - paths: one handler opening N files, each at a path joined from request data declared just
 *   above it: the path-traversal rules' shape (a declaration to find and a containment check to
 *   look for, per sink, in the same function).
 */

export type AnalysisLanguage = 'javascript' | 'python' | 'go' | 'java';
export type Shape = 'functions' | 'one-function' | 'distinct-names' | 'appends' | 'paths';

/** The shapes whose flow work the tests hold to linear (test/reviewers/builtin/analysis-bounds.test.ts). */
export const SHAPES: readonly Shape[] = ['functions', 'one-function', 'distinct-names', 'appends'];
/**
 * What `npm run bench:analysis` times: those, and `paths`, whose cost is the path-traversal rules'
 * own search of the function around each sink (quadratic in the sinks of one function today;
 * docs/benchmarks.md), not the flow adapter's work.
 */
export const BENCH_SHAPES: readonly Shape[] = [...SHAPES, 'paths'];
export const LANGUAGES: readonly AnalysisLanguage[] = ['javascript', 'python', 'go', 'java'];

export const EXTENSION: Record<AnalysisLanguage, string> = {
  javascript: 'js',
  python: 'py',
  go: 'go',
  java: 'java',
};

const lines = (n: number, line: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => line(i)).join('\n');

function javascript(shape: Shape, n: number): string {
  const head = "const { exec } = require('child_process');\n";
  switch (shape) {
    case 'functions':
      return (
        head + lines(n, (i) => `function h${i}(req) {\n  const cmd = 'ls ' + req.query.x;\n  exec(cmd);\n}`)
      );
    case 'one-function':
      return `${head}function handler(req) {\n  let cmd = 'ls ';\n${lines(n, (i) => `  const part${i} = req.query.p${i};\n  cmd = cmd + part${i};\n  exec('ls ' + part${i});`)}\n}`;
    case 'distinct-names':
      return (
        head + lines(n, (i) => `const c${i} = 'ls ' + process.argv[${i % 7}] + input${i};\nexec(c${i});`)
      );
    case 'appends':
      return `${head}function handler(req) {\n  let cmd = 'ls';\n${lines(n, (i) => `  cmd += ' ' + req.query.p${i};\n  exec(cmd);`)}\n}`;
    case 'paths':
      return `const fs = require('fs');\nconst path = require('path');\nfunction handler(req) {\n${lines(n, (i) => `  const p${i} = path.join(__dirname, req.query.f${i});\n  fs.readFileSync(p${i});`)}\n}`;
  }
}

function python(shape: Shape, n: number): string {
  const head = 'import os\nimport subprocess\n\n';
  switch (shape) {
    case 'functions':
      return (
        head +
        lines(n, (i) => `def h${i}(request):\n    cmd = "ls " + request.args["x"]\n    os.system(cmd)\n`)
      );
    case 'one-function':
      return `${head}def handler(request):\n    cmd = "ls "\n${lines(n, (i) => `    part${i} = request.args["p${i}"]\n    cmd = cmd + part${i}\n    os.system("ls " + part${i})`)}\n`;
    case 'distinct-names':
      return head + lines(n, (i) => `c${i} = "ls " + input${i}\nos.system(c${i})`);
    case 'appends':
      return `${head}def handler(request):\n    cmd = "ls"\n${lines(n, (i) => `    cmd += " " + request.args["p${i}"]\n    os.system(cmd)`)}\n`;
    case 'paths':
      return `${head}def handler(request):\n${lines(n, (i) => `    p${i} = os.path.join(BASE, request.args["f${i}"])\n    open(p${i})`)}\n`;
  }
}

function go(shape: Shape, n: number): string {
  const head = 'package main\n\nimport "os/exec"\n\n';
  switch (shape) {
    case 'functions':
      return (
        head +
        lines(
          n,
          (i) =>
            `func h${i}(r *http.Request) {\n\tcmd := "ls " + r.FormValue("x")\n\texec.Command("sh", "-c", cmd).Run()\n}`,
        )
      );
    case 'one-function':
      return `${head}func handler(r *http.Request) {\n\tcmd := "ls "\n${lines(n, (i) => `\tpart${i} := r.FormValue("p${i}")\n\tcmd = cmd + part${i}\n\texec.Command("sh", "-c", "ls "+part${i}).Run()`)}\n}`;
    case 'distinct-names':
      // `input` holds request data (assigned in a handler): a constant there would make every sink quiet.
      return `${head}var input string\n\nfunc read(r *http.Request) {\n\tinput = r.FormValue("x")\n}\n\n${lines(n, (i) => `var c${i} = "ls " + input`)}\n\nfunc run() {\n${lines(n, (i) => `\texec.Command("sh", "-c", c${i}).Run()`)}\n}`;
    case 'appends':
      return `${head}func handler(r *http.Request) {\n\tcmd := "ls"\n${lines(n, (i) => `\tcmd += " " + r.FormValue("p${i}")\n\texec.Command("sh", "-c", cmd).Run()`)}\n}`;
    case 'paths':
      return `package main\n\nimport (\n\t"net/http"\n\t"os"\n\t"path/filepath"\n)\n\nfunc handler(r *http.Request) {\n${lines(n, (i) => `\tp${i} := filepath.Join("/srv", r.FormValue("f${i}"))\n\tos.Open(p${i})`)}\n}`;
  }
}

function java(shape: Shape, n: number): string {
  const head = 'public class Handlers {\n';
  switch (shape) {
    case 'functions':
      return `${head}${lines(n, (i) => `    public void h${i}(String x) throws Exception {\n        String cmd = "ls " + x;\n        Runtime.getRuntime().exec(cmd);\n    }`)}\n}\n`;
    case 'one-function':
      return `${head}    public void handler(String x) throws Exception {\n        String cmd = "ls ";\n${lines(n, (i) => `        String part${i} = x + "${i}";\n        cmd = cmd + part${i};\n        Runtime.getRuntime().exec("ls " + part${i});`)}\n    }\n}\n`;
    case 'distinct-names':
      return `${head}    private String input;\n${lines(n, (i) => `    private String c${i} = "ls " + input;`)}\n    public void run() throws Exception {\n${lines(n, (i) => `        Runtime.getRuntime().exec(c${i});`)}\n    }\n}\n`;
    case 'appends':
      return `${head}    public void handler(String x) throws Exception {\n        String cmd = "ls";\n${lines(n, (i) => `        cmd += " " + x + "${i}";\n        Runtime.getRuntime().exec(cmd);`)}\n    }\n}\n`;
    case 'paths':
      return `${head}    public void handler(HttpServletRequest request) throws Exception {\n${lines(n, (i) => `        File f${i} = new File("/srv", request.getParameter("f${i}"));\n        new FileInputStream(f${i});`)}\n    }\n}\n`;
  }
}

const GENERATORS: Record<AnalysisLanguage, (shape: Shape, n: number) => string> = {
  javascript,
  python,
  go,
  java,
};

/** A file of `language` with `n` sinks in `shape`. */
export function worstCase(language: AnalysisLanguage, shape: Shape, n: number): string {
  return `${GENERATORS[language](shape, n)}\n`;
}

/**
 * A file of the `functions` shape as close to `bytes` as whole functions allow: the largest file
 * the builtin engine reads is MAX_FILE_BYTES, so this is the most analysis one file can ask for.
 */
export function worstCaseOfSize(
  language: AnalysisLanguage,
  bytes: number,
  shape: Shape = 'functions',
): string {
  const perSink = worstCase(language, shape, 101).length / 101;
  let n = Math.floor(bytes / perSink);
  let text = worstCase(language, shape, n);
  while (text.length > bytes) {
    n -= Math.max(1, Math.ceil((text.length - bytes) / perSink));
    text = worstCase(language, shape, n);
  }
  return text;
}
