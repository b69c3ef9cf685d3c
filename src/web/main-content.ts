import { Readability } from "@mozilla/readability";
import { parseDom } from "./dom.js";
import TurndownService from "turndown";

// The main content of an HTML page as Firefox Reader View extracts it (@mozilla/readability over a
// linkedom DOM), with its plain text and a Markdown rendering (turndown).

export interface MainContent {
  title: string | null;
  byline: string | null;
  siteName: string | null;
  publishedTime: string | null;
  excerpt: string | null;
  /** The article's cleaned HTML. */
  html: string;
  /** The article's plain text. */
  text: string;
  markdown: string;
}

type ReadabilityDocument = ConstructorParameters<typeof Readability>[0];

function parseDocument(html: string): ReadabilityDocument {
  return parseDom(html) as ReadabilityDocument;
}

const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced" });

export function htmlToMarkdown(html: string): string {
  return turndown.turndown(html).trim();
}

/** The readable main content, or undefined when the page has none. */
export function readMainContent(html: string): MainContent | undefined {
  const article = new Readability(parseDocument(html)).parse();
  if (!article?.content || !article.textContent?.trim()) return undefined;
  return {
    title: article.title ?? null,
    byline: article.byline ?? null,
    siteName: article.siteName ?? null,
    publishedTime: article.publishedTime ?? null,
    excerpt: article.excerpt ?? null,
    html: article.content,
    text: article.textContent,
    markdown: htmlToMarkdown(article.content),
  };
}
