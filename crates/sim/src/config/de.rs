//! Shapes of scenario values, held to the documented form where serde's derives accept more.
//!
//! * A table only as a table: a derived struct also reads a positional array (`host = [3]` was
//!   read as `pcpus = 3`, `vm = [["vm0", 2]]` failed with serde's "struct Vm with 10
//!   elements"). [`table`], [`table_opt`] and [`tables`] refuse an array with one line.
//! * A named choice only as a string: toml's enum reader says "wanted string or table" for a
//!   number, naming no allowed value. [`variant`] and [`variant_opt`] list them.
//!
//! * A whole number beyond TOML's 64-bit integers: toml's parser names no key;
//!   [`integer_too_large`] finds it.
//!
//! Every scenario field whose value is a table, an array of tables or a named choice goes
//! through one of these (`#[serde(deserialize_with = ...)]`).

use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, Error, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;
use std::marker::PhantomData;

/// The message for an array where a table belongs.
const ARRAY_FOR_TABLE: &str = "expected a table (a [section] or { key = value, ... }), found an array";

struct TableVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for TableVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a table")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<T, A::Error> {
        Err(A::Error::custom(ARRAY_FOR_TABLE))
    }
}

/// A table (`[host]`, `[vm.net]`, `{ ... }`, a dict): never an array read positionally.
pub fn table<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(TableVisitor(PhantomData))
}

/// An optional table (`[vm.halt_poll]`); absent or JSON null: None.
pub fn table_opt<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    struct Opt<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Opt<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a table")
        }
        fn visit_unit<E: Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_none<E: Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
            TableVisitor(PhantomData).visit_map(map).map(Some)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Option<T>, A::Error> {
            Err(A::Error::custom(ARRAY_FOR_TABLE))
        }
    }
    d.deserialize_any(Opt(PhantomData))
}

/// One element of an array of tables.
struct TableSeed<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for TableSeed<T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        table(d)
    }
}

/// An array of tables (`[[vm]]`, `[[host.cpu_hog]]`): each element a table.
pub fn tables<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    struct Seq<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Seq<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an array of tables ([[section]] entries)")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut out = Vec::new();
            while let Some(t) = seq.next_element_seed(TableSeed(PhantomData))? {
                out.push(t);
            }
            Ok(out)
        }
        fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Vec<T>, A::Error> {
            Err(A::Error::custom("expected an array of tables ([[section]] entries, one per item), found one table ([section])"))
        }
    }
    d.deserialize_any(Seq(PhantomData))
}

/// The allowed names of enum `T`, as serde words them (`` one of `a`, `b`, `c` `` or
/// `` `a` or `b` ``): from the message of a name no enum has.
pub(crate) fn allowed_names<'de, T: Deserialize<'de>>() -> String {
    let probe: serde::de::value::StringDeserializer<serde::de::value::Error> = "\u{1}".to_string().into_deserializer();
    match T::deserialize(probe) {
        Err(e) => e.to_string().split_once(", expected ").map_or_else(|| "a name".to_string(), |(_, names)| names.to_string()),
        Ok(_) => "a name".to_string(),
    }
}

struct VariantVisitor<T>(PhantomData<T>);

impl<T> VariantVisitor<T> {
    fn refuse<'de, E: Error>(what: impl fmt::Display) -> Result<T, E>
    where
        T: Deserialize<'de>,
    {
        Err(E::custom(format!("{what} is not allowed; expected {} (a string)", allowed_names::<T>())))
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for VariantVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string naming one of the allowed values")
    }
    fn visit_str<E: Error>(self, v: &str) -> Result<T, E> {
        T::deserialize(IntoDeserializer::<E>::into_deserializer(v.to_string()))
    }
    fn visit_bool<E: Error>(self, v: bool) -> Result<T, E> {
        Self::refuse(v)
    }
    fn visit_i64<E: Error>(self, v: i64) -> Result<T, E> {
        Self::refuse(v)
    }
    fn visit_u64<E: Error>(self, v: u64) -> Result<T, E> {
        Self::refuse(v)
    }
    fn visit_f64<E: Error>(self, v: f64) -> Result<T, E> {
        Self::refuse(crate::error::num(v))
    }
    fn visit_unit<E: Error>(self) -> Result<T, E> {
        Self::refuse("null")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<T, A::Error> {
        Self::refuse("an array")
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<T, A::Error> {
        Self::refuse("a table")
    }
}

/// A named choice (`interrupt_delivery = "posted"`): a string naming one of `T`'s values; any
/// other value is refused with the list of names.
pub fn variant<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(VariantVisitor(PhantomData))
}

/// An optional named choice (`[host.io] switch`); absent or JSON null: None.
pub fn variant_opt<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    struct Opt<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Opt<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a string naming one of the allowed values")
        }
        fn visit_unit<E: Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_none<E: Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
            variant(d).map(Some)
        }
        fn visit_str<E: Error>(self, v: &str) -> Result<Option<T>, E> {
            VariantVisitor(PhantomData).visit_str(v).map(Some)
        }
        fn visit_bool<E: Error>(self, v: bool) -> Result<Option<T>, E> {
            VariantVisitor::<T>::refuse(v).map(Some)
        }
        fn visit_i64<E: Error>(self, v: i64) -> Result<Option<T>, E> {
            VariantVisitor::<T>::refuse(v).map(Some)
        }
        fn visit_u64<E: Error>(self, v: u64) -> Result<Option<T>, E> {
            VariantVisitor::<T>::refuse(v).map(Some)
        }
        fn visit_f64<E: Error>(self, v: f64) -> Result<Option<T>, E> {
            VariantVisitor::<T>::refuse(crate::error::num(v)).map(Some)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Option<T>, A::Error> {
            VariantVisitor::<T>::refuse("an array").map(Some)
        }
        fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Option<T>, A::Error> {
            VariantVisitor::<T>::refuse("a table").map(Some)
        }
    }
    d.deserialize_any(Opt(PhantomData))
}

/// `[vm.net.moderation]`: `kind` and the scheme's keys (`eventpath_policy::moderation`).
///
/// The policy's enum is internally tagged, whose buffering loses the key of a bad value (as
/// the workload's would, `workload::by_kind`): the table is split here into its `kind` and
/// the scheme's own table, so every message names the key.
pub fn moderation<'de, D: Deserializer<'de>>(d: D) -> Result<eventpath_policy::moderation::ModerationConfig, D::Error> {
    use eventpath_policy::moderation::ModerationConfig as M;
    let mut t: toml::Table = table(d)?;
    let kinds = M::KINDS.map(|k| format!("\"{k}\"")).join(", ");
    let kind = match t.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(other) => return Err(D::Error::custom(format!("`kind` = {other} is not allowed; expected one of {kinds}"))),
        None => return Err(D::Error::custom(format!("missing key `kind` (the scheme: one of {kinds})"))),
    };
    fn scheme<'de, T: Deserialize<'de>>(kind: &str, t: toml::Table) -> Result<T, String> {
        serde_path_to_error::deserialize(toml::Value::Table(t)).map_err(|e| {
            let field = e.path().to_string();
            let inner = crate::error::one_line(e.inner().message());
            if field.is_empty() || field == "." || field == "?" {
                format!("kind \"{kind}\": {inner}")
            } else {
                format!("`{field}` (kind \"{kind}\"): {inner}")
            }
        })
    }
    let m = match kind.as_str() {
        "none" => match t.keys().next() {
            Some(k) => Err(format!("`{k}` (kind \"none\"): no moderation has no parameters; remove the key or choose a scheme")),
            None => Ok(M::None),
        },
        "fir" => scheme(&kind, t).map(M::Fir),
        "cgr" => scheme(&kind, t).map(M::Cgr),
        "air" => scheme(&kind, t).map(M::Air),
        "dim" => scheme(&kind, t).map(M::Dim),
        "notf_coal" => scheme(&kind, t).map(M::NotfCoal),
        "guest_dim" => scheme(&kind, t).map(M::GuestDim),
        other => Err(format!("kind \"{other}\" is not allowed; expected one of {kinds}")),
    };
    m.map_err(D::Error::custom)
}
