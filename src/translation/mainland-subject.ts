// The mainland-China data-subject screen of translation.zh-en (the service does not process personal
// data of mainland-CN subjects). A text is refused, before any charge, when:
//   1. the buyer declares `data_subject_jurisdiction: CN` (HK, MO and TW are not mainland);
//   2. it holds a PRC resident identity card number: 18 characters (6-digit mainland region code 11-65,
//      a real birth date YYYYMMDD, 3-digit sequence, ISO 7064 MOD 11-2 check character 0-9 or X), digits
//      optionally grouped 6-8-4 by a space or hyphen;
//   3. it holds a mainland mobile number: 1[3-9] and 9 more digits (optionally grouped 3-4-4), with or
//      without a +86 / 0086 / (86) prefix, not part of a longer digit run;
//   4. it holds a mainland street address: in Chinese, a province, municipality or major city name, then
//      within 40 characters of the same sentence an administrative marker (市 区 县 镇 乡 州 旗) followed
//      within 20 characters by a street-level marker (路 街 大道 巷 弄 胡同 小区 里, or a number before
//      号 室 栋 幢 单元 楼); in English, a street word (Road, Rd, Street, Avenue, Lane, Lu, Jie, Hutong...)
//      with a mainland province or major city name and a digit within 120 characters either side.
// Simplified and Traditional forms are matched. The screen is a heuristic: it errs towards refusing,
// and a refusal costs the buyer nothing.

export interface SubjectHit {
  rule: "declared_jurisdiction" | "prc_resident_id" | "mainland_mobile" | "mainland_address";
  /** The matched text, masked (never echoed in clear). */
  masked: string;
}

const MAINLAND_REGION = new Set(["11", "12", "13", "14", "15", "21", "22", "23", "31", "32", "33", "34", "35", "36", "37", "41", "42", "43", "44", "45", "46", "50", "51", "52", "53", "54", "61", "62", "63", "64", "65"]);
const ID_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
const ID_CHECK = "10X98765432";

function mask(s: string, keepStart = 3, keepEnd = 2): string {
  const t = s.replace(/\s+/g, " ");
  if (t.length <= keepStart + keepEnd) return "*".repeat(t.length);
  return t.slice(0, keepStart) + "*".repeat(t.length - keepStart - keepEnd) + t.slice(-keepEnd);
}

/** Whether 18 characters are a valid PRC resident identity number (region, birth date, check character). */
export function isPrcResidentId(id: string): boolean {
  if (!/^\d{17}[\dX]$/i.test(id)) return false;
  if (!MAINLAND_REGION.has(id.slice(0, 2))) return false;
  const y = Number(id.slice(6, 10));
  const m = Number(id.slice(10, 12));
  const d = Number(id.slice(12, 14));
  const date = new Date(Date.UTC(y, m - 1, d));
  if (y < 1900 || date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d || date.getTime() > Date.now()) return false;
  const sum = ID_WEIGHTS.reduce((acc, w, i) => acc + w * Number(id[i]), 0);
  return ID_CHECK[sum % 11] === id[17]!.toUpperCase();
}

const ID_CANDIDATE = /(?<![0-9A-Za-z])(\d{6})[ -]?(\d{8})[ -]?(\d{3}[\dXx])(?![0-9A-Za-z])/g;
const MOBILE = /(?<![\d+])(?:(?:\+|00)\s?86[ -]?|\(\+?86\)\s?)?1[3-9]\d(?:[ -]?\d{4}){2}(?!\d)/;

const ZH_PLACES = [
  "北京", "天津", "上海", "重庆", "重慶", "河北", "山西", "辽宁", "遼寧", "吉林", "黑龙江", "黑龍江", "江苏", "江蘇", "浙江", "安徽", "福建", "江西", "山东", "山東",
  "河南", "湖北", "湖南", "广东", "廣東", "海南", "四川", "贵州", "貴州", "云南", "雲南", "陕西", "陝西", "甘肃", "甘肅", "青海", "内蒙古", "內蒙古", "广西", "廣西",
  "西藏", "宁夏", "寧夏", "新疆", "广州", "廣州", "深圳", "杭州", "南京", "武汉", "武漢", "成都", "西安", "苏州", "蘇州", "厦门", "廈門", "青岛", "青島", "大连",
  "大連", "宁波", "寧波", "长沙", "長沙", "郑州", "鄭州", "沈阳", "瀋陽", "哈尔滨", "哈爾濱", "济南", "濟南", "合肥", "福州", "昆明", "东莞", "東莞", "佛山", "无锡", "無錫",
];
const ZH_ADDRESS = new RegExp(
  `(?:${ZH_PLACES.join("|")})[^。！？；!?;\\n]{0,40}?[市区區县縣镇鎮乡鄉州旗][^。！？；!?;\\n]{0,20}?(?:路|街|大道|巷|弄|胡同|衚衕|小区|小區|里|[0-9０-９一二三四五六七八九十百]+\\s*(?:号|號|室|栋|棟|幢|单元|單元|楼|樓))`,
  "u",
);

const EN_PLACES =
  "Beijing|Peking|Tianjin|Shanghai|Chongqing|Hebei|Shanxi|Liaoning|Jilin|Heilongjiang|Jiangsu|Zhejiang|Anhui|Fujian|Jiangxi|Shandong|Henan|Hubei|Hunan|Guangdong|Hainan|Sichuan|Guizhou|Yunnan|Shaanxi|Gansu|Qinghai|Inner Mongolia|Guangxi|Tibet|Xizang|Ningxia|Xinjiang|Guangzhou|Shenzhen|Hangzhou|Nanjing|Wuhan|Chengdu|Xi'?an|Suzhou|Xiamen|Qingdao|Dalian|Ningbo|Changsha|Zhengzhou|Shenyang|Harbin|Jinan|Hefei|Fuzhou|Kunming|Dongguan|Foshan|Wuxi";
const EN_STREET = /\b(?:Road|Rd\.?|Street|St\.|Avenue|Ave\.?|Boulevard|Lane|Alley|Lu|Jie|Dadao|Hutong|Xiang)\b/g;
const EN_PLACE = new RegExp(`\\b(?:${EN_PLACES})\\b`, "i");

/** The first mainland-CN data-subject hit in a call, or undefined. */
export function mainlandSubject(text: string, declaredJurisdiction?: string): SubjectHit | undefined {
  if (declaredJurisdiction && declaredJurisdiction.trim().toUpperCase() === "CN") return { rule: "declared_jurisdiction", masked: "CN" };
  for (const m of text.matchAll(ID_CANDIDATE)) {
    const id = `${m[1]}${m[2]}${m[3]}`;
    if (isPrcResidentId(id)) return { rule: "prc_resident_id", masked: mask(id, 4, 4) };
  }
  const mobile = MOBILE.exec(text);
  if (mobile) return { rule: "mainland_mobile", masked: mask(mobile[0], 3, 2) };
  const zh = ZH_ADDRESS.exec(text);
  if (zh) return { rule: "mainland_address", masked: mask(zh[0], 2, 1) };
  for (const m of text.matchAll(EN_STREET)) {
    const window = text.slice(Math.max(0, m.index! - 120), m.index! + m[0].length + 120);
    if (EN_PLACE.test(window) && /\d/.test(window)) return { rule: "mainland_address", masked: mask(m[0], 1, 1) };
  }
  return undefined;
}

export const SCREEN_RULES = {
  declared_jurisdiction: "the call declares data_subject_jurisdiction CN",
  prc_resident_id: "a PRC resident identity card number (mainland region code, valid birth date, MOD 11-2 check character)",
  mainland_mobile: "a mainland mobile number (1[3-9]xxxxxxxxx, with or without +86)",
  mainland_address: "a mainland street address (province or city, administrative and street-level markers)",
} as const;
