import { excerpt } from "./finding.js";
import { isCode, type SourceFile } from "./source-file.js";

// What the supplied code does, as capabilities, each with the first place it is seen; and what a
// declaration claims, read through a shipped vocabulary. Used by the capability-mismatch auditor and to
// decide which agentic risk categories apply.

export const CAPABILITIES = ["network", "shell", "filesystem_write", "filesystem_read", "payments", "email", "database", "llm", "browser"] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** Code that exercises each capability (JavaScript/TypeScript and Python). */
const OBSERVED: Record<Capability, RegExp> = {
  network: /(?<![\w$.])fetch\s*\(|\baxios\b|\bgot\s*\(|\bhttps?\.(?:get|request)\s*\(|\brequests\.(?:get|post|put|patch|delete|head|request)\s*\(|\bhttpx\.|\burllib\.request\b|\burlopen\s*\(|\bnew\s+WebSocket\s*\(|\baiohttp\.ClientSession\b/,
  shell: /["']child_process["']|\bnode:child_process\b|\bexecSync\s*\(|\bexecFile(?:Sync)?\s*\(|\bspawn(?:Sync)?\s*\(|\bsubprocess\.|\bos\.(?:system|popen)\s*\(|\bDeno\.Command\b|\bBun\.spawn\b/,
  filesystem_write: /\b(?:writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream|unlink|unlinkSync|rmSync|rmdir|mkdir|mkdirSync)\s*\(|\bfs\.rm\s*\(|\bshutil\.(?:rmtree|move|copy\w*)\s*\(|\bos\.(?:remove|unlink|makedirs|mkdir)\s*\(|\bopen\s*\([^)]{0,200}["'](?:w|a|x|wb|ab|w\+|a\+)["']/,
  filesystem_read: /\b(?:readFile|readFileSync|createReadStream|readdir|readdirSync)\s*\(|\bopen\s*\(|\bos\.listdir\s*\(|\bPath\([^)]*\)\.read_(?:text|bytes)\s*\(/,
  payments: /\b(?:sendTransaction|signTransaction|writeContract|privateKeyToAccount|mnemonicToAccount)\s*\(|\bethers\.Wallet\b|\bnew\s+Wallet\s*\(|\btransferFrom\s*\(|\bstripe\.(?:charges|paymentIntents|payouts|transfers)\b|\bweb3\.eth\.send|\bwrapFetchWithPayment\b/,
  email: /\bnodemailer\b|\bsmtplib\b|@sendgrid|\bsendgrid\b|\bsendMail\s*\(|\bsend_mail\s*\(|\bsendEmail\s*\(|\bresend\.emails\b/,
  database: /(?:require\(\s*|from\s+|import\s+)["']?(?:pg|mysql2?|sqlite3|better-sqlite3|mongoose|mongodb|@prisma\/client|knex|typeorm|redis|ioredis|psycopg2?|sqlalchemy|pymongo|chromadb|pinecone|qdrant_client|weaviate)\b|\bINSERT\s+INTO\b|\bCREATE\s+TABLE\b/,
  llm: /["']openai["']|\bfrom\s+openai\b|\bimport\s+openai\b|@anthropic-ai|\banthropic\b|@ai-sdk|\blangchain|\bchat\.completions\b|\bmessages\.create\s*\(|\bgenerateText\s*\(|\bollama\b|google\.generativeai|@google\/genai/i,
  browser: /\bpuppeteer\b|\bplaywright\b|\bselenium\b|\bwebdriver\b/,
};

/** Words in a declared capability that claim each capability. */
const VOCABULARY: Record<Capability, RegExp> = {
  network: /\b(?:https?|fetch|web|browse|browsing|internet|network|api|apis|search|scrape|scraping|crawl|crawler|url|urls|webhook|webhooks|download|egress|online|research)\b/i,
  shell: /\b(?:shell|exec|execute|execution|command|commands|terminal|bash|subprocess|sandbox|code[-_ ]?execution|run[-_ ]?code)\b/i,
  filesystem_write: /\b(?:write|writes|files?|filesystem|fs|disk|storage|save|saves|upload|uploads)\b/i,
  filesystem_read: /\b(?:read|reads|files?|filesystem|fs|disk|storage|documents?)\b/i,
  payments: /\b(?:pay|payment|payments|wallet|wallets|transfer|transfers|transaction|transactions|onchain|on-chain|crypto|sign|signing|billing|stripe|usdc|x402|invoice|invoices)\b/i,
  email: /\b(?:e-?mail|emails|mail|smtp|notify|notifications?)\b/i,
  database: /\b(?:database|databases|db|sql|storage|persist|persistence|memory|vector|records|crm)\b/i,
  llm: /\b(?:llm|llms|model|models|ai|chat|completion|completions|generate|generation|inference|gpt|language|summari[sz]e|summari[sz]ation|translate|translation|reasoning)\b/i,
  browser: /\b(?:browser|browse|browsing|scrape|scraping|headless|web)\b/i,
};

export interface Observation {
  capability: Capability;
  file: number;
  line: number;
  evidence: string;
}

/** The first place each capability is exercised in the supplied code. */
export function observedCapabilities(files: SourceFile[]): Map<Capability, Observation> {
  const seen = new Map<Capability, Observation>();
  for (const f of files.filter(isCode)) {
    f.code.forEach((line, i) => {
      for (const c of CAPABILITIES) {
        if (!seen.has(c) && OBSERVED[c].test(line)) seen.set(c, { capability: c, file: f.index, line: i + 1, evidence: excerpt(line) });
      }
    });
  }
  return seen;
}

/** The capabilities a declaration claims (a declared entry may claim several). */
export function declaredCapabilities(declared: string[]): Map<Capability, string[]> {
  const out = new Map<Capability, string[]>();
  for (const d of declared) {
    const words = d.replace(/[._:/]+/g, " ");
    for (const c of CAPABILITIES) if (VOCABULARY[c].test(words)) out.set(c, [...(out.get(c) ?? []), d]);
  }
  return out;
}
