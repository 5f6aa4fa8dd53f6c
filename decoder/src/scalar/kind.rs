//! [`ScalarType`]: what a scalar track holds, one to four floats.

/// The kind of values a scalar track list holds (ACL's track types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// One float per track.
    Float1,
    /// Two floats.
    Float2,
    /// Three floats.
    Float3,
    /// Four floats.
    Float4,
    /// Four floats, a SIMD vector in ACL (decoded like [`ScalarType::Float4`]).
    Vector4,
}

impl ScalarType {
    /// The type stored as byte `value` (1 to 5).
    pub const fn from_byte(value: u8) -> Option<ScalarType> {
        match value {
            1 => Some(ScalarType::Float1),
            2 => Some(ScalarType::Float2),
            3 => Some(ScalarType::Float3),
            4 => Some(ScalarType::Float4),
            5 => Some(ScalarType::Vector4),
            _ => None,
        }
    }

    /// Its byte in the format.
    pub const fn to_byte(self) -> u8 {
        match self {
            ScalarType::Float1 => 1,
            ScalarType::Float2 => 2,
            ScalarType::Float3 => 3,
            ScalarType::Float4 => 4,
            ScalarType::Vector4 => 5,
        }
    }

    /// Floats per track.
    pub const fn components(self) -> usize {
        match self {
            ScalarType::Float1 => 1,
            ScalarType::Float2 => 2,
            ScalarType::Float3 => 3,
            ScalarType::Float4 | ScalarType::Vector4 => 4,
        }
    }

    /// Its name in ACL's text format: `float1f` … `float4f`, `vector4f`.
    pub const fn name(self) -> &'static str {
        match self {
            ScalarType::Float1 => "float1f",
            ScalarType::Float2 => "float2f",
            ScalarType::Float3 => "float3f",
            ScalarType::Float4 => "float4f",
            ScalarType::Vector4 => "vector4f",
        }
    }
}
