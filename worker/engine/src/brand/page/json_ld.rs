//! JSON-LD helpers: `@type`s, walking `@graph`s, and the organisation
//! types whose name and logo count.

use serde_json::Value;

pub(super) fn json_ld_types(v: &Value) -> Vec<String> {
    match v.get("@type") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        _ => vec![],
    }
}

pub(super) fn walk_ld<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| walk_ld(x, out)),
        Value::Object(o) => {
            out.push(v);
            if let Some(g) = o.get("@graph") {
                walk_ld(g, out);
            }
            for key in ["publisher", "brand", "author", "provider"] {
                if let Some(x) = o.get(key) {
                    walk_ld(x, out);
                }
            }
        }
        _ => {}
    }
}

pub(super) fn ld_url(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        Value::Object(o) => o
            .get("url")
            .or_else(|| o.get("contentUrl"))
            .and_then(Value::as_str),
        Value::Array(a) => a.first().and_then(ld_url),
        _ => None,
    }
}

pub(super) const ORG_TYPES: &[&str] = &[
    "Organization",
    "Corporation",
    "LocalBusiness",
    "OnlineStore",
    "OnlineBusiness",
    "Brand",
    "NGO",
    "EducationalOrganization",
    "Store",
    "Restaurant",
    "ProfessionalService",
    "SoftwareApplication",
];
