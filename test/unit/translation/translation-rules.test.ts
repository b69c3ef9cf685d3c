import { expect } from "chai";
import { isPrcResidentId, mainlandSubject } from "../../../src/translation/mainland-subject.js";
import { detectDirection, scriptCount } from "../../../src/translation/script-share.js";
import { translationAnswer } from "../../../src/translation/translation-prompt.js";

describe("translation.zh-en rules: direction detection and the mainland-CN data-subject screen", () => {
  it("detects the direction from the share of Han characters among Han characters plus Latin words", () => {
    expect(scriptCount("你好，世界")).to.deep.equal({ han_characters: 4, latin_words: 0, han_share: 1 });
    expect(detectDirection(scriptCount("你好，世界"))).to.equal("zh-en");
    expect(detectDirection(scriptCount("Hello, world"))).to.equal("en-zh");
    // 2 Han, 2 words: exactly the threshold counts as Chinese.
    expect(scriptCount("使用 USDC 支付 today")).to.include({ han_characters: 4, latin_words: 2 });
    expect(detectDirection(scriptCount("我们 use this API every day"))).to.equal("en-zh");
    expect(detectDirection(scriptCount("它 is"))).to.equal("zh-en");
    expect(detectDirection(scriptCount("12345 !!!"))).to.equal(undefined);
    // Traditional characters are Han too (translated from Chinese).
    expect(detectDirection(scriptCount("臺灣的銀行"))).to.equal("zh-en");
  });

  it("validates PRC resident identity numbers: mainland region, real birth date, MOD 11-2 check character", () => {
    expect(isPrcResidentId("11010519491231002X")).to.equal(true);
    expect(isPrcResidentId("11010519491231002x")).to.equal(true);
    expect(isPrcResidentId("110105199003071239")).to.equal(true);
    expect(isPrcResidentId("110105199003071238")).to.equal(false); // check character
    expect(isPrcResidentId("110105199002301236")).to.equal(false); // 30 February
    expect(isPrcResidentId("810000199003071230")).to.equal(false); // Hong Kong residence permit region
    expect(isPrcResidentId("11010519900307123")).to.equal(false);
  });

  it("refuses declared CN subjects, ID numbers (also grouped), mainland mobiles and mainland street addresses", () => {
    const rule = (text: string, declared?: string) => mainlandSubject(text, declared)?.rule;
    expect(rule("anything", "cn")).to.equal("declared_jurisdiction");
    expect(rule("anything", "HK")).to.equal(undefined);
    expect(rule("ID: 110105 19900307 1239")).to.equal("prc_resident_id");
    expect(rule("身份证110105199003071239")).to.equal("prc_resident_id");
    expect(rule("tel +86 138 1234 5678")).to.equal("mainland_mobile");
    expect(rule("(86) 139-1234-5678")).to.equal("mainland_mobile");
    expect(rule("电话15012345678。")).to.equal("mainland_mobile");
    expect(rule("0086 18612345678")).to.equal("mainland_mobile");
    expect(rule("上海市徐汇区漕溪北路595号")).to.equal("mainland_address");
    expect(rule("廣東省深圳市南山區科技園路1號")).to.equal("mainland_address");
    expect(rule("浙江省杭州市西湖区文三路90号")).to.equal("mainland_address");
    expect(rule("Room 1201, 88 Jianguo Road, Chaoyang District, Beijing")).to.equal("mainland_address");
    expect(mainlandSubject("tel +86 138 1234 5678")!.masked).not.to.contain("1234 5678");
  });

  it("serves texts that only mention mainland places, foreign numbers and non-mainland subjects", () => {
    for (const text of [
      "北京是中国的首都，上海的马路很宽。",
      "我在上海市工作。",
      "Beijing Road in Shanghai is famous for shopping.",
      "The invoice total is 13,912,345 and the order id 11010519491231002.",
      "Call +1 415 555 0100 or +852 9123 4567.",
      "The timestamp 1700000000000 is in milliseconds.",
      "香港九龍彌敦道100號",
    ]) {
      expect(mainlandSubject(text), text).to.equal(undefined);
    }
  });

  it("holds the model's translation to the target language", () => {
    expect(translationAnswer("zh-en").safeParse({ translation: "Hello." }).success).to.equal(true);
    expect(translationAnswer("zh-en").safeParse({ translation: "你好。" }).success).to.equal(false);
    expect(translationAnswer("en-zh").safeParse({ translation: "你好，USDC。" }).success).to.equal(true);
    expect(translationAnswer("en-zh").safeParse({ translation: "Hello there." }).success).to.equal(false);
    expect(translationAnswer("en-zh").parse({ translation: "你好" }).notes).to.deep.equal([]);
  });
});
