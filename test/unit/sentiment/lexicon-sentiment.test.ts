import { expect } from "chai";
import { aggregate, analyzeText, labelOf, NEGATIVE_THRESHOLD, POSITIVE_THRESHOLD } from "../../../src/sentiment/lexicon-sentiment.js";

describe("lexicon sentiment (wink-sentiment, AFINN-165)", () => {
  it("labels by the documented thresholds on the normalized score, boundaries included", () => {
    expect(POSITIVE_THRESHOLD).to.equal(0.05);
    expect(NEGATIVE_THRESHOLD).to.equal(-0.05);
    expect(labelOf(0.05)).to.equal("positive");
    expect(labelOf(0.0499)).to.equal("neutral");
    expect(labelOf(0)).to.equal("neutral");
    expect(labelOf(-0.0499)).to.equal("neutral");
    expect(labelOf(-0.05)).to.equal("negative");
    expect(labelOf(1)).to.equal("positive");
    expect(labelOf(-1)).to.equal("negative");
  });

  it("scores a text: absolute score, normalized score (wink's / 5) and the words that carried it", () => {
    const r = analyzeText("I love this great product");
    expect(r).to.deep.equal({ score: 6, normalized_score: 0.6, label: "positive", words: [{ word: "love", score: 3, negated: false }, { word: "great", score: 3, negated: false }] });
    const neutral = analyzeText("The meeting is on Tuesday.");
    expect(neutral).to.deep.equal({ score: 0, normalized_score: 0, label: "neutral", words: [] });
  });

  it("flips a negated word and says so", () => {
    const r = analyzeText("This is not good at all");
    expect(r.label).to.equal("negative");
    expect(r.words).to.deep.equal([{ word: "good", score: -3, negated: true }]);
  });

  it("names a two-word lexicon phrase whole", () => {
    expect(analyzeText("The results were cool stuff").words).to.deep.equal([{ word: "cool stuff", score: 3, negated: false }]);
    expect(analyzeText("They screwed up").words).to.deep.equal([{ word: "screwed up", score: -3, negated: false }]);
  });

  it("keeps the normalized score within [-1, 1] and adjusts for length", () => {
    const short = analyzeText("fraud");
    const long = analyzeText(`fraud ${"the plain words of a long neutral filing ".repeat(20)}`);
    expect(short.normalized_score).to.equal(-0.8);
    expect(long.normalized_score).to.be.greaterThan(short.normalized_score).and.lessThan(0);
    expect(analyzeText("😀 😀 😀 outstanding superb").normalized_score).to.be.at.most(1);
  });

  it("aggregates as the mean normalized score with label counts; nothing to aggregate is null", () => {
    const a = aggregate([analyzeText("I love this great product"), analyzeText("This is not good at all"), analyzeText("The meeting is on Tuesday.")]);
    expect(a).to.deep.equal({ normalized_score: 0, label: "neutral", count: 3, counts: { positive: 1, neutral: 1, negative: 1 } });
    const b = aggregate([analyzeText("I love this great product"), analyzeText("The meeting is on Tuesday.")]);
    expect(b).to.deep.equal({ normalized_score: 0.3, label: "positive", count: 2, counts: { positive: 1, neutral: 1, negative: 0 } });
    expect(aggregate([])).to.deep.equal({ normalized_score: null, label: null, count: 0, counts: { positive: 0, neutral: 0, negative: 0 } });
  });
});
