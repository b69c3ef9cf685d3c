import type { Auditor, RuleDef } from "../finding.js";
import { lineHits } from "../line-hits.js";
import { isCode } from "../source-file.js";

// Auditor 8, unsafe deserialization and dynamic code: text turned into code or objects.
//
// Rules:
// - eval.model-output-executed (critical): eval/exec/new Function/vm/execSync/os.system/subprocess given
//   what a model produced (completion, choices[0], message.content, output_text, llm/model output,
//   generated code, ai response).
// - eval.dynamic-code (high): eval(…), new Function(…), vm.runIn*Context/vm.Script/compileFunction,
//   setTimeout/setInterval with a string, and Python exec(…).
// - eval.unsafe-deserialization (high): pickle/cPickle/dill/marshal loads, jsonpickle.decode, shelve.open,
//   node-serialize unserialize, Python yaml.load without a safe loader or yaml.unsafe_load, torch.load
//   without weights_only=True.

const MODEL_OUTPUT = /\b(?:completion|choices\s*\[\s*0\s*\]|message\.content|output_text|outputText|llm_?(?:output|response|result)|model_?(?:output|response)|generated_?code|generatedCode|ai_?response|aiResponse|response\.text)\b/i;
const EXECUTES = /(?<![\w$.])(?:eval|exec|execSync|Function|runInNewContext|runInThisContext|runInContext)\s*\(|\bnew\s+Function\s*\(|\bos\.(?:system|popen)\s*\(|\bsubprocess\.\w+\s*\(/;
const JS_DYNAMIC = /(?<![\w$.])eval\s*\(|\bnew\s+Function\s*\(|\bvm\.(?:runIn\w+|compileFunction|Script)\b|\bset(?:Timeout|Interval)\s*\(\s*["'`]/;
const PY_DYNAMIC = /(?<![\w$.])(?:eval|exec)\s*\(/;
const DESERIALIZE = /\b(?:c?Pickle|pickle|dill|marshal)\.loads?\s*\(|\bjsonpickle\.decode\s*\(|\bshelve\.open\s*\(|\bunserialize\s*\(|require\(\s*["']node-serialize["']\s*\)|\byaml\.unsafe_load\s*\(/;
const PY_YAML_LOAD = /\byaml\.load\s*\(/;
const PY_YAML_SAFE = /SafeLoader|CSafeLoader|BaseLoader/;
const TORCH_LOAD = /\btorch\.load\s*\(/;

const RULES: RuleDef[] = [
  { id: "eval.model-output-executed", severity: "critical", title: "Model output executed as code", detects: "eval/exec/Function/vm/execSync/os.system/subprocess given a completion, message content or generated code", recommendation: "Never execute model output directly; run generated code only in an isolated sandbox with no credentials, after validation and with human approval for side effects." },
  { id: "eval.dynamic-code", severity: "high", title: "Dynamic code evaluation", detects: "eval, new Function, vm contexts, string timers, Python exec", recommendation: "Replace dynamic evaluation with explicit parsing (JSON.parse, ast.literal_eval) or a dispatch table." },
  { id: "eval.unsafe-deserialization", severity: "high", title: "Unsafe deserialization", detects: "pickle/dill/marshal loads, jsonpickle, shelve, node-serialize, yaml.load without a safe loader, torch.load without weights_only=True", recommendation: "Deserialize untrusted data only with data-only formats (JSON, yaml.safe_load, safetensors, torch.load(weights_only=True))." },
];

export const unsafeEvalAuditor: Auditor = {
  id: "unsafe-eval",
  name: "Unsafe deserialization and eval",
  summary: "eval, dynamic functions, executing model output, pickle and unsafe YAML loading",
  rules: RULES,
  analyze(view) {
    return view.files.filter(isCode).flatMap((f) => {
      const py = f.language === "python";
      return lineHits(f, (line) => {
        if (EXECUTES.test(line) && MODEL_OUTPUT.test(line)) return "eval.model-output-executed";
        if ((py ? PY_DYNAMIC : JS_DYNAMIC).test(line)) return "eval.dynamic-code";
        const deserializes = DESERIALIZE.test(line) || (py && PY_YAML_LOAD.test(line) && !PY_YAML_SAFE.test(line)) || (py && TORCH_LOAD.test(line) && !/weights_only\s*=\s*True/.test(line));
        return deserializes && "eval.unsafe-deserialization";
      });
    });
  },
};
